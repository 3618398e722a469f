"""
Bag storage (rosbags, mapped MCAP chunks), MCAP layout checks, bulk CDR and MCAP writing.

A bag written as it goes, one complete MCAP split at a time: ``splitwrite``.
"""
