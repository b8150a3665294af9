import sys

from drk.cli import main

sys.exit(main())
