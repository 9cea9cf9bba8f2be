"""The controllers whose work a simulation needs: workload expansion and claims from templates."""
