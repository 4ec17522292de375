"""`python -m simrl.bench [mode] [key=value ...]`: a user's mistake prints one line, no traceback."""

from simrl.bench.cli import main
from simrl.errors import exit_on_user_error

with exit_on_user_error():
    main()
