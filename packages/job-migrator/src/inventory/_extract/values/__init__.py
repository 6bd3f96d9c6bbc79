"""What values tell: types of names, whether an argument can be stored, syntactic facts."""
