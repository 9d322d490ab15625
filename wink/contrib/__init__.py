"""Ready tool suites, each a section that carries its tools and their instructions.

Import the suite you need: ``wink.contrib.planning`` (a session-scoped plan) or
``wink.contrib.vfs`` (file tools over the prompt's ``Filesystem``). Nothing is
imported here, so using one suite never loads the other.
"""
