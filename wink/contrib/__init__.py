"""Ready tool suites, each a section that carries its tools and their instructions.

Import the suite you need: ``wink.contrib.planning`` (a session-scoped plan),
``wink.contrib.vfs`` (file tools over the prompt's ``Filesystem``) or
``wink.contrib.asteval`` (a Python sandbox; needs the ``asteval`` extra). Nothing
is imported here, so using one suite never loads another.
"""
