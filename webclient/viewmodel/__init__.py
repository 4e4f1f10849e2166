"""What a session shows, as plain state: the thread of entries, terminals, controls. No HTML, no protocol, no pages."""
