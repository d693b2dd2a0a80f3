"""The cluster drill (issue 59): the site run across hosts on one machine, its parts cut off
and killed while players play (docs/SCALING.md)."""
