from taskhand.cli.main import main

main()
