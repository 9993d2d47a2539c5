def register(ctx):
    pass
