"""Bag storage (rosbags, mapped MCAP chunks), MCAP layout checks, bulk CDR and MCAP writing."""
