"""Mutants: the reference scheduler with one documented fault each, to show which scenario catches what.

`faults.MUTANTS` lists them; `python -m tests.mutants.run <mutant> [tkn-scheduler flags]`
runs one (for `--scheduler command`); `python -m tests.mutants.kill_table` (`make mutants`)
runs the suite against each and writes the kill table to docs/mutants.md.
"""
