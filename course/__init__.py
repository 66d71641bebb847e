"""minigrad-course: homework from the chapters, graded with nbgrader (see cli.py)."""
