"""Migration from Dagger: a Dagger job's ``.properties`` file as a dagger spec."""
