import sys

from cypool.cli import main

sys.exit(main())
