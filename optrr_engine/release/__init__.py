"""Releases: the configuration (:mod:`.config`), schema inference (:mod:`.schema`), the column codec
(:mod:`.codec`), the design step (:mod:`.design_step`), streaming perturbation with an external shuffle
(:mod:`.perturb`, :mod:`.shuffle`), and the manifest and HTML report (:mod:`.manifest`, :mod:`.report`).
"""
