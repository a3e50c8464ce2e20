"""Values written in place of data the ledger does not have."""

MISSING_AMOUNT = "0.00"
