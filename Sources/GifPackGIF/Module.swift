// placeholder file removed once the module has code
