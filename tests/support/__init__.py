"""What tests share: servers, browsers, test clients, probes of processes and pages."""
