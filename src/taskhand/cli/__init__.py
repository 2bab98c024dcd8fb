"""The `taskhand` command line: parsing and printing only; the library does the work."""
