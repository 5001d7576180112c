"""Use cases: the only orchestration. Entry points (api, worker, the CLI) call these; these call the domains."""
