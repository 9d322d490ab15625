"""Bounded randomized stress campaigns (``make stress``); ``make test`` runs a quick pass."""
