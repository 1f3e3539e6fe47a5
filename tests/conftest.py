import os
import sys

# Make the brute-force reference importable as ``reference`` whatever the import mode.
sys.path.insert(0, os.path.dirname(__file__))
