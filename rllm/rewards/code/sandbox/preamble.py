"""Imports every sandboxed program gets before its own code (except pytest-style KodCode modules).

Like the original's runners (and LeetCode's judge), solutions may use ``List``, ``Counter``,
``heappush``, ``bisect_left``, ``inf``, ``SortedList``... without importing them. The preamble runs
in the program's namespace as separate code, so line numbers in the program's errors stay its own.
The fork server imports all of it once, so it costs a program nothing.
"""

PREAMBLE = """\
import bisect, collections, copy, datetime, functools, heapq, itertools, json, math, operator, random, re, string, sys
from bisect import *
from collections import *
from copy import deepcopy
from functools import *
from heapq import *
from itertools import *
from math import *
from operator import *
from string import *
from typing import *
from builtins import *
try:
    from sortedcontainers import SortedDict, SortedList, SortedSet
except ImportError:
    pass
sys.setrecursionlimit(100000)
"""
