import sys

from dralloc.cli.main import main

sys.exit(main())
