from taskhand.cli import main

main()
