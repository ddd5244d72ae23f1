"""`converge conformance`: a server checked, from outside, against CONTRACT §1-§5 and §9.

`runner.run` judges every registered rule (`rules.RULES`, from the `checks_*` modules by
contract section) through the public routes with two principals' tokens, and deletes what
it made; `report` turns the outcome into a table, JSON or JUnit XML; `cli` is the command.
"""
