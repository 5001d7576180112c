"""The web dashboard and playground, served under /dashboard by the same front.

Server-rendered pages; every form is a plain HTML form that works without
JavaScript, signed in through a signed session cookie and guarded by a CSRF token.
"""
