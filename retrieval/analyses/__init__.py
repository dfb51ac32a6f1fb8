"""What the lab says about the numbers: `tuning` (sweeps, cross-validation, the verdict), `diagnosis` (why a
question fails) and `teaching` (the worked examples of the Metrics lab and the Tour).
"""
