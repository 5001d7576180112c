"""The `taxonomist` command line: an entry point, like `api` and `worker`, above the use cases."""
