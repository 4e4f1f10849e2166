"""How bytes leave the server: static files under content-hashed URLs, responses compressed for the browser."""
