"""Loader models: how Windows and ld.so would really load torch's libraries in this env."""
