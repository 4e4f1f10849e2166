"""Who a request is: the sign-in token, cookies, the trusted header, OpenID, the proxy's proof, body limits."""
