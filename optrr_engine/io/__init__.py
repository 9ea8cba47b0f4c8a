"""Reading and writing data files: CSV/TSV, Excel .xlsx, Parquet, SPSS .sav and Stata .dta.

Readers stream chunks of string columns (:mod:`.readers`); writers append tables to a temporary file that
is renamed into place only when complete (:mod:`.writers`, :mod:`.atomic`). Heavy libraries (pandas,
pyarrow, openpyxl, pyreadstat) are imported inside the functions that need them.
"""
