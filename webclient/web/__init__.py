"""The web: the Starlette app, its pages and routes, the live socket, sign-in and security headers."""
