"""The E1 pipeline in miniature on a CPU: synthetic task, warm start, budgeted eval, E1 training."""
