"""The Design tab: the attribute table, the column panel, the epsilon editor, the mechanism panel and the
controller that keeps one design per method up to date."""
