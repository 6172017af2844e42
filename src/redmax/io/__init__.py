"""Input/output: scene files (TOML); later URDF and results files."""

from redmax.io.scene_file import load_scene_file, save_scene_file, scene_from_dict, scene_to_dict

__all__ = ["load_scene_file", "save_scene_file", "scene_from_dict", "scene_to_dict"]
