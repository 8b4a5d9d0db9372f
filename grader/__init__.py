"""The autograder: students' lab work graded under real faults, results for Gradescope."""
