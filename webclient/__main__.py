from webclient.cli import main

main()
