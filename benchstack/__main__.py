import sys

from benchstack.cli import main

sys.exit(main())
