#!/usr/bin/env bash
# Make a Unix account for each person of the class list who has none yet (run as root).
#   add-users.sh CLASS_LIST [HOME_BASE]
# CLASS_LIST: lines "USER teacher|student" (see class.example.txt). HOME_BASE (default
# /home): where the home folders go. Existing accounts are left as they are. For PAM
# logins, give each new account a password afterwards (passwd USER, or chpasswd).
set -euo pipefail
list=${1:?usage: add-users.sh CLASS_LIST [HOME_BASE]}
base=${2:-/home}
while read -r user role _; do
  case "$user" in ''|'#'*) continue ;; esac
  case "$role" in teacher|student) ;; *)
    echo "add-users.sh: $list: '$user' has role '$role'; write teacher or student" >&2
    exit 1 ;;
  esac
  if id "$user" >/dev/null 2>&1; then
    echo "$user: exists"
  else
    useradd --create-home --home-dir "$base/$user" --shell /bin/bash "$user"
    echo "$user: created ($role)"
  fi
done < "$list"
