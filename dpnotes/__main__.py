import sys

from dpnotes.cli import main

sys.exit(main())
