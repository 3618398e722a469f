"""ament_python package; also installs with plain pip into a virtual environment."""
from glob import glob

from setuptools import find_packages, setup

package_name = 'rnea_ros'

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*', 'bench']),
    # The simulated robot's reality gaps (rnea_ros/sim/gaps/default.yaml, read beside the code);
    # the Fast DDS profile the node and the sim announce themselves with (polling/discovery.py).
    package_data={'rnea_ros.sim': ['gaps/*.yaml'], 'rnea_ros.polling': ['*.xml']},
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        ('share/' + package_name + '/launch', glob('launch/*.launch.py')),
        ('share/' + package_name + '/config', glob('config/*.yaml') + glob('config/*.xml')),
    ],
    python_requires='>=3.10',
    install_requires=['setuptools', 'numpy', 'numba', 'daqp'],
    zip_safe=True,
    maintainer='rnea_ros developers',
    maintainer_email='rnea_ros@example.com',
    description='URDF -> numba RNEA inverse dynamics, and a ROS 2 node publishing torques',
    license='BSD-3-Clause',
    # colcon test runs pytest when 'pytest' is among the 'test' extras (setuptools >= 72
    # ignores tests_require). The pip-only ones are in the README, "Building with colcon".
    extras_require={'test': ['pytest', 'pytest-timeout', 'pin', 'example-robot-data',
                             'quadprog']},
    entry_points={
        'console_scripts': [
            'rnea_demo = rnea_ros.demos.library:main',
            'rnea_node = rnea_ros.node.main:main',
            'rnea_node_demo = rnea_ros.demos.node_demo:main',
            'rnea_bag = rnea_ros.bag.cli:main',
            'rnea_fleet = rnea_ros.fleet.cli:main',
            'rnea_identify = rnea_ros.identify.cli:main',
            'rnea_excite = rnea_ros.excite.cli:main',
            'rnea_sim = rnea_ros.sim.main:main',
            'rnea_convert = rnea_ros.convert.cli:main',
            'rnea_ctl = rnea_ros.ctl.cli:main',
        ],
    },
)
