"""cypool's side-by-side benchmark suite: `python -m bench --help`."""
