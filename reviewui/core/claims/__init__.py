"""The agent's claims about its tests, checked: what it said it ran and saw, rerun at the branch head.

`extract.extract_claims(transcript)` finds the claims, `verify.rerun` reruns
each distinct test command once in the sandbox, `verify.judge` sets the two
side by side, and `findings.claim_findings` turns the checks into findings.
"""
