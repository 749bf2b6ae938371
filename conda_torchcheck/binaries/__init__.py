"""Binary readers: PE (Windows) and ELF (Linux). They read only the tables they need."""
