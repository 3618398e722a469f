"""
Fleet analysis: many rosbag2 bags through the ``rnea_bag`` pipeline on Dask (``rnea_fleet``).

``bags`` finds the bags and names their robots, ``digest`` fingerprints a bag's content and the
settings, ``task`` analyses one bag (one Dask task, run on a worker), ``cluster`` starts or
connects to the Dask cluster, ``run`` drives a fleet run, ``comparable`` picks the bags of like
motions, ``drift`` flags joints whose residual grows, ``table`` writes fleet.parquet and
fleet.md, ``report`` report.html, ``cli`` is the command line. Imports ``rnea_ros.bag`` (the
per-bag pipeline), dask/distributed, pyarrow and plotly; never rclpy or ``rnea_ros.node``.
"""
