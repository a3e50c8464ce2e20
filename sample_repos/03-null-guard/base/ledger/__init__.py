"""Export ledger entries as CSV."""
