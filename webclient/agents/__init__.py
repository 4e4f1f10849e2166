"""The agents a server offers and the sessions made from them."""
