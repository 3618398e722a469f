"""
A rosbag2 directory written as it goes: one complete MCAP file (a split) at a time.

As ``ros2 bag record`` with ``--max-bag-duration``: the bag ``path`` holds ``metadata.yaml``
and the splits ``<name>_0.mcap``, ``<name>_1.mcap``, ...; each split is a whole MCAP file
(summary, footer) written by rosbags' writer through the bulk chunk writer (``mcapwrite``),
and ``metadata.yaml`` lists it only once it is complete. A split is built in a subdirectory of
its own name and moved into the bag when closed; ``metadata.yaml`` is replaced (written aside,
then renamed), so that at every moment the bag is readable (rosbags, ``rnea_bag``) with every
split written so far: a process killed mid-run loses only the split it was writing. The bag is
created with the writer, with an empty ``metadata.yaml``: a path that cannot be written fails
there, before any message.
"""
from __future__ import annotations

import os
from pathlib import Path
import shutil

import numpy as np
import yaml

METADATA = 'metadata.yaml'
VERSION = 9  # rosbag2 metadata version, as rosbags' Writer.VERSION_LATEST
# libyaml's when there: metadata.yaml is read and written once per split, and grows with them.
_LOADER = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)
_DUMPER = getattr(yaml, 'CSafeDumper', yaml.SafeDumper)


class SplitBagWriter:
    """Write the rosbag2 directory ``path`` (must not exist) split by split."""

    def __init__(self, path: Path):
        """Create the bag directory and its empty ``metadata.yaml`` (``OSError`` if it cannot)."""
        from rnea_ros.recording.bagio.storage import typestore
        self.path = Path(path)
        self.path.mkdir(parents=True)  # FileExistsError for a bag there already
        self.store = typestore()
        self.files: list[dict] = []
        self.topics: dict[tuple[str, str], dict] = {}  # (topic, type) -> topics_with_message_count
        self.start, self.end = 2**63 - 1, 0
        self.written = 0
        self.custom_data: dict[str, str] | None = None  # rosbag2's custom_data: see finish
        self._write_metadata()

    def split_name(self) -> str:
        """Return the name of the next split, without ``.mcap``."""
        return f'{self.path.name}_{len(self.files)}'

    def write_split(self, messages: list[tuple[int, str, str, bytes]]) -> Path | None:
        """
        Write ``messages`` ((log time ns, topic, msgtype, CDR data)) as the next split.

        Messages are written in log-time order. Returns the split's path (None for no
        messages); ``OSError`` when it cannot be written (the bag keeps its earlier splits).
        """
        from rosbags.rosbag2 import StoragePlugin, Writer
        from rnea_ros.recording.bagio.mcapwrite import write_messages
        if not messages:
            return None
        messages = sorted(messages, key=lambda m: m[0])
        name = self.split_name()
        building = self.path / name
        try:
            with Writer(building, version=VERSION, storage_plugin=StoragePlugin.MCAP) as writer:
                connections = {}
                for _, topic, msgtype, _ in messages:
                    if (topic, msgtype) not in connections:
                        connections[(topic, msgtype)] = writer.add_connection(
                            topic, msgtype, typestore=self.store)
                lengths = np.array([len(m[3]) for m in messages], dtype=np.int64)
                data = np.frombuffer(b''.join(m[3] for m in messages), dtype=np.uint8)
                write_messages(writer, np.array([m[0] for m in messages], dtype=np.int64),
                               np.array([connections[m[1:3]].id for m in messages],
                                        dtype=np.int64),
                               (data, np.zeros(0, dtype=np.uint8)),
                               np.cumsum(lengths) - lengths, lengths)
            info = yaml.load((building / METADATA).read_text(), Loader=_LOADER)
            info = info['rosbag2_bagfile_information']
            split = self.path / f'{name}.mcap'
            with open(building / f'{name}.mcap', 'rb') as file:
                os.fsync(file.fileno())  # on the disk before metadata.yaml names it
            os.replace(building / f'{name}.mcap', split)
        finally:
            shutil.rmtree(building, ignore_errors=True)
        for entry in info['topics_with_message_count']:
            key = (entry['topic_metadata']['name'], entry['topic_metadata']['type'])
            if key in self.topics:
                self.topics[key]['message_count'] += entry['message_count']
            else:
                self.topics[key] = entry
        self.files.append(info['files'][0])
        self.start = min(self.start, messages[0][0])
        self.end = max(self.end, messages[-1][0])
        self.written += len(messages)
        self._write_metadata()
        return split

    def finish(self, custom_data: dict[str, str]) -> None:
        """Write ``custom_data`` (strings by name) into ``metadata.yaml``, e.g. at the end."""
        self.custom_data = dict(custom_data)
        self._write_metadata()

    def _write_metadata(self) -> None:
        """Replace ``metadata.yaml`` with the bag of the splits written (never half written)."""
        count = self.written
        metadata = {'rosbag2_bagfile_information': {
            'version': VERSION,
            'storage_identifier': 'mcap',
            'relative_file_paths': [entry['path'] for entry in self.files],
            'duration': {'nanoseconds': max(0, self.end - self.start) if count else 0},
            'starting_time': {'nanoseconds_since_epoch': self.start if count else 0},
            'message_count': count,
            'topics_with_message_count': list(self.topics.values()),
            'compression_format': '',
            'compression_mode': '',
            'files': self.files,
            'custom_data': self.custom_data,
            'ros_distro': 'rosbags',
        }}
        aside = self.path / f'{METADATA}.tmp'
        with open(aside, 'w') as file:
            yaml.dump(metadata, file, Dumper=_DUMPER, default_flow_style=False)
            file.flush()
            os.fsync(file.fileno())
        os.replace(aside, self.path / METADATA)
