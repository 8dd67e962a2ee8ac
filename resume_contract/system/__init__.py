"""What resume-contract needs of the operating system: POSIX only (`platform`), and worker processes that stop
with their parent on Ctrl-C or SIGTERM (`interrupts`). Imports nothing of resume-contract but its errors."""
