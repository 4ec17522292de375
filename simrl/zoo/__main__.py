"""`python -m simrl.zoo [list | path NAME | check NAME]`: a user's mistake prints one line."""

from simrl.errors import exit_on_user_error
from simrl.zoo import main

with exit_on_user_error():
    main()
